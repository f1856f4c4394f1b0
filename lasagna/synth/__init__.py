"""lasagna.synth"""

"""lasagna.results"""

"""lasagna.evaluation"""

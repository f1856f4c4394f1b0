"""lasagna.metrics"""

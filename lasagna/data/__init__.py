"""lasagna.data"""

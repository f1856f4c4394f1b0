"""lasagna.models"""

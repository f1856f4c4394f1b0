"""lasagna.engine"""

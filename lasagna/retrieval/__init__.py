"""lasagna.retrieval"""

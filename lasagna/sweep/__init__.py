"""lasagna.sweep"""

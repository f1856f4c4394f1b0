"""A lasagna plugin package, as a third party writes one: its entry points
(lasagna_example_plugin-0.1.0.dist-info/entry_points.txt) name its registry modules."""

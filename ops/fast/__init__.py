"""Fast paths: int8 weights, and the native C int8 product built once per machine."""

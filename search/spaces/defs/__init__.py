"""Default search spaces, one module per family or group; each registers with
`search.spaces.register_space`."""

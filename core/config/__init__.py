"""Configuration: one YAML file, validated with errors that name file, line and key."""

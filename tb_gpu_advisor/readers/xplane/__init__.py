"""Reading XPlane protobuf files: our own schema, the lazy reader and typed stat access."""

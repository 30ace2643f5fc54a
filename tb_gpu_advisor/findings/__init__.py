"""The diagnosis: rules over the trace model and the HostReport, giving ranked findings and the verdict."""

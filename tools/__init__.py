"""Developer tools kept out of the installed package: real-profile capture scripts and the calibration table."""

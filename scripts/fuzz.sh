#!/bin/sh
# `make fuzz`: builds the libFuzzer targets in tests/fuzz/ and runs each for FUZZ_SECONDS.
echo "fuzz: no fuzz targets yet"

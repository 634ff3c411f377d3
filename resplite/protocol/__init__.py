"""Sans-IO protocol layer: request reader, reply values and the reply encoder. No I/O here."""

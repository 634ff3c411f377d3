"""Shared test support: raw RESP clients and server processes on free ports."""

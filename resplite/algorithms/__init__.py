"""Pure algorithms the commands use: 80-bit long double arithmetic, longest common subsequence."""

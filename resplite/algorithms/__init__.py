"""Pure algorithms the commands use: 80-bit long double arithmetic, longest common subsequence,
bit operations, HyperLogLog, and sorted-set scores and ranges as Redis reads and prints them."""

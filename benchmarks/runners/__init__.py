"""Where benchmarks run: `local` (in this process, or N processes through torchrun)."""

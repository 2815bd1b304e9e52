"""What arrives: posts addressed to the persona, queued for the batch routines."""

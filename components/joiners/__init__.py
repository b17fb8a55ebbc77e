"""Joiners: fuse the ranked lists of several search methods."""

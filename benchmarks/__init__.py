"""Side-by-side measurements: each benchmark times SteerSum's way and the naive/reference way of the
same job in one run, checks they give the same answer, and reports the ratio."""

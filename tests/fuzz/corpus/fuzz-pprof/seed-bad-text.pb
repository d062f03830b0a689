this is not a profile

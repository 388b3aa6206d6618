"""Published numbers as CSV data files (see crepe_utils.reported)."""

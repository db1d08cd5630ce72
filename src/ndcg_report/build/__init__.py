"""How a report is built: parameters, input checks, the papermill -> nbval -> nbconvert steps, publish."""

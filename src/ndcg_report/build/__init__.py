"""How a report is built: parameters, input checks and cache, the papermill -> nbval -> nbconvert steps, the kernel fork server, staging and publish."""

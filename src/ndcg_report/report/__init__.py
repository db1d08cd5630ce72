"""The report: parameters, the experiment the notebook shows, figures, and the papermill/nbval/nbconvert build."""

"""``python -m neomx.launch``: start distributed neomx jobs, and convert MXJobs for Kubeflow."""

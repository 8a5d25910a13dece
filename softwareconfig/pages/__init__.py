"""Server-rendered pages of software configs, components and deployments."""

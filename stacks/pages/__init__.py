"""Server-rendered pages for stacks: list, detail, actions, launch and update.

Views parse the request, call the same services and selectors as the API,
and render; every refusal is the service's ``HeatError``, shown as a message.
"""

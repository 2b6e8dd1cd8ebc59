from selene.cli import entrypoint

entrypoint()

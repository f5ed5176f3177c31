from unit.runtime.client.stub import stub

__all__ = ["stub"]

"""Values shared by the template code and the resource plugins."""


class _Unresolved:
    """Stands for a value known only once resources exist (get_resource, get_attr).

    Validation before anything is created sees this instead of the value;
    property checks skip it.
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "<unresolved>"

    def __bool__(self):
        return False

    def __reduce__(self):
        return (_Unresolved, ())


UNRESOLVED = _Unresolved()

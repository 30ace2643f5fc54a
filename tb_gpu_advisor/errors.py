"""The one error type the analyzer raises for bad input: it names the file and the problem."""


class ProfileError(Exception):
    """A profile file that cannot be analyzed; `str()` is a one-line message naming the file."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

"""The one error type the analyzer raises for bad input (it names the file and the problem), and the exit
statuses of every command line of the project."""

EXIT_OK = 0
EXIT_REGRESSION = 1  # `check`: the candidate is worse than the baseline beyond the threshold and the noise
EXIT_BAD_INPUT = 2  # bad input or usage, said in one line
EXIT_INTERNAL = 3  # a bug of ours


class ProfileError(Exception):
    """A profile file that cannot be analyzed; `str()` is a one-line message naming the file."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

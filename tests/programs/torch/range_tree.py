"""The instrumentation's ranges recorded in this process, as a tree: Recorder stands in for
ceiling_torch.nvtx's push and pop (model_zoo.py and training_checks.py read what it kept)."""


class Node:
    __slots__ = ("name", "children")

    def __init__(self, name):
        self.name, self.children = name, []


class Recorder:
    """Stands in for ceiling_torch.nvtx's push and pop: the ranges as a tree."""

    def __init__(self):
        self.root = Node("")
        self.open = [self.root]

    def push(self, message):
        node = Node(message.decode())
        self.open[-1].children.append(node)
        self.open.append(node)

    def pop(self):
        self.open.pop()

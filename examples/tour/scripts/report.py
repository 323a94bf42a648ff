"""Print a report of the shelf."""

import json
import sys

TIMEOUT = 30


class Report:
    """A report over items."""

    def __init__(self, items):
        self.items = items

    def total(self):
        # TODO: skip items with a negative count
        return sum(i["count"] for i in self.items)


def main(path):
    with open(path) as f:
        print(Report(json.load(f)).total())


if __name__ == "__main__":
    main(sys.argv[1])

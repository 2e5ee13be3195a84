# A directory with __main__.py is a script too: `python app x` runs this.
import sys

print("argv", sys.argv)
print("name", __name__)

"""Start the zygote inside the sandbox: ``python -I -S <this file> CONFIG``.

The sandbox runs /grader/autograder/sandboxed/boot.py. Standard library only: it adds the
sandbox's read-only site-packages (``CONFIG["site_dirs"]``) and ``/grader`` (where judge.sandbox
binds the files of this folder, the only grader code the sandbox holds) to the path, then hands
CONFIG to :func:`autograder.sandboxed.zygote.main`.
"""

import json
import os
import site
import sys
import traceback

if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    for path in config.get("site_dirs", []):
        site.addsitedir(path)
    # this file is <root>/autograder/sandboxed/boot.py: <root> holds the package
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        from autograder.sandboxed.zygote import main

        main(config)
    except BaseException:
        traceback.print_exc()
        sys.exit(1)

from anemon.cli import main

raise SystemExit(main())

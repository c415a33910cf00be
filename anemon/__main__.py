from anemon.cli import program

program()

from openbot.cli.app import main

main()

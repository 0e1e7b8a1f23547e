from hippo_core.cli import main

main()

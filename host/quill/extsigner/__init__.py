"""Bitcoin Core's external signers (doc/external-signer.md): the `-signer` command run as a
subprocess with `enumerate`, `getdescriptors`, `displayaddress` and `signtx`, as Core's
src/external_signer.cpp and common/run_command.cpp run it."""

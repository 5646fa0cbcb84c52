"""What more than one test module uses: factories, servers, fakes of peers, wait_for."""

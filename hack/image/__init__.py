"""`python -m hack.image`: the command line of the OLM image build (`olm_testkit.image`)."""

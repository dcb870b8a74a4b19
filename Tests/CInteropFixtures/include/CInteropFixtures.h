void sf_fixture_placeholder(void);

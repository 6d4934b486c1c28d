"""``gluon.rnn``: recurrent layers and cells."""

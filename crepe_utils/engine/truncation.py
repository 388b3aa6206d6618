"""What happens to a caption longer than the model's context (applied by :mod:`.tokenizing`): ``keep_eot``
keeps the first tokens and the end token (open_clip's behaviour), ``official`` drops the end token as CREPE's
vendored tokenizer does, ``error`` refuses. A module of its own so that the settings, and the command line's
help, can name the policies without loading the tokenizers."""

TRUNCATIONS = ("keep_eot", "official", "error")

"""WordEval: Word-native editing cases with deterministic oracles.

- :mod:`.catalogue`  unit catalogue (YAML under ``catalogue/``), loader and validator
- :mod:`.basedocs`   base documents (synthetic recipes and packaged real documents)
- :mod:`.ops`        the operation library, named after Word commands
- :mod:`.build`      ``build_case``, ``iter_cases``, composition expansion, ``write_case_dir``
"""

"""WordEval: Word-native editing cases with deterministic oracles (its modules: ``README.md`` beside this file).

- :mod:`.catalogue`  unit catalogue (YAML under ``catalogue/``), loader and validator
- :mod:`.basedocs`   base documents (synthetic recipes and packaged real documents)
- :mod:`.ops`        the operation library, named after Word commands
- :mod:`.cases`      ``build_case``, ``iter_cases``, composition expansion, ``write_case_dir``
- :mod:`.snapshot`, :mod:`.oracle`  what a document holds after the style cascade, and the checks of a case
"""

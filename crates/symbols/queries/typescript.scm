; TypeScript and TSX definitions (both grammars share these node types).
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(function_signature name: (identifier) @name) @def.function
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(method_definition name: (_) @name) @def.method
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @def.method
(interface_declaration name: (type_identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(type_alias_declaration name: (type_identifier) @name) @def.type
(internal_module name: (_) @name) @def.module
(module name: (_) @name) @def.module

; Variables: functions when the value is a function, else const / variable by
; the declaration keyword. Only module- (or namespace-) level ones are kept;
; extract.rs drops the locals of function bodies.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @def.function)
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @def.function)
(lexical_declaration (variable_declarator name: (identifier) @name) @def.const)
(variable_declaration (variable_declarator name: (identifier) @name) @def.variable)
